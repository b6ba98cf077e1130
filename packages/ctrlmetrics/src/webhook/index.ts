/** Webhooks: the server (controller-runtime's `pkg/webhook`), AdmissionReview and ConversionReview handling, metrics. */
export {
  WebhookServer,
  DEFAULT_WEBHOOK_BIND_ADDRESS,
  DEFAULT_WEBHOOK_CERT_DIR,
  MAX_CONVERSION_BODY_BYTES,
} from './server.js';
export { ConversionWebhook, ConversionRegistry, CONVERSION_PATH, answerConversion } from './conversion.js';
export type { ConversionWebhookOptions, SpokeConversion, ConversionAnswer } from './conversion.js';
export type { WebhookServerOptions } from './server.js';
export { allowed, denied, errored, patched, MAX_ADMISSION_BODY_BYTES } from './admission.js';
export type {
  AdmissionHandler,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionStatus,
  AdmissionUserInfo,
} from './admission.js';
export { Webhook, AdmissionDeniedError, webhookPath, defaultingHandler, validatingHandler } from './for-kind.js';
export type { Defaulter, Validator, Warnings, WebhookOptions, KubeJson } from './for-kind.js';
