/**
 * Project scaffolding: `ctrlmetrics init` and `ctrlmetrics edit`.
 * @module
 */
export { initProject, renderProject, ctrlmetricsPackageVersion, ScaffoldError } from './init.js';
export type { InitOptions } from './init.js';
export type { ProjectParams } from './templates/params.js';
export { editProject, readOptionState, SCAFFOLD_OPTIONS, isScaffoldOption } from './edit.js';
export type { EditRequest, EditResult, ScaffoldOption } from './edit.js';
export { projectNameProblem, domainProblem } from './names.js';
