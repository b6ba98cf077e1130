/** Admission webhooks: the server (controller-runtime's `pkg/webhook`), AdmissionReview handling and metrics. */
export { WebhookServer, DEFAULT_WEBHOOK_BIND_ADDRESS, DEFAULT_WEBHOOK_CERT_DIR } from './server.js';
export type { WebhookServerOptions } from './server.js';
export { allowed, denied, errored, patched, MAX_ADMISSION_BODY_BYTES } from './admission.js';
export type { AdmissionHandler, AdmissionRequest, AdmissionResponse, AdmissionStatus, AdmissionUserInfo } from './admission.js';
export { Webhook, AdmissionDeniedError, webhookPath, defaultingHandler, validatingHandler } from './for-kind.js';
export type { Defaulter, Validator, Warnings, WebhookOptions, KubeJson } from './for-kind.js';
