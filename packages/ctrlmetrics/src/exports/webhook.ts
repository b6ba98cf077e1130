/**
 * Admission and conversion webhooks (controller-runtime's `pkg/webhook`, `admission` and `conversion`): the HTTPS
 * server on 9443, a kind's defaulter and validator, AdmissionReview answers, CRD conversion.
 * @module ctrlmetrics/webhook
 */
export {
  WebhookServer,
  DEFAULT_WEBHOOK_BIND_ADDRESS,
  DEFAULT_WEBHOOK_CERT_DIR,
  MAX_CONVERSION_BODY_BYTES,
} from '../webhook/server.js';
export type { WebhookServerOptions } from '../webhook/server.js';
export { ConversionWebhook, ConversionRegistry, CONVERSION_PATH } from '../webhook/conversion.js';
export type { ConversionWebhookOptions, SpokeConversion } from '../webhook/conversion.js';
export { allowed, denied, errored, patched } from '../webhook/admission.js';
export type {
  AdmissionHandler,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionStatus,
  AdmissionUserInfo,
} from '../webhook/admission.js';
export { Webhook, AdmissionDeniedError, webhookPath } from '../webhook/for-kind.js';
export type { Defaulter, Validator, Warnings, WebhookOptions, KubeJson } from '../webhook/for-kind.js';
