/**
 * Serving certificates (controller-runtime's `pkg/certwatcher`): a key pair reloaded when its files change, and a
 * self-signed one for development.
 * @module ctrlmetrics/certwatcher
 */
export { CertWatcher, CertificateLoadError, loadCertificatePair } from '../certwatcher/certwatcher.js';
export type {
  CertificatePair,
  CertWatcherCounters,
  CertWatcherOptions,
  CertificateListener,
} from '../certwatcher/certwatcher.js';
export { generateSelfSignedCertificate } from '../certwatcher/selfsigned.js';
export type { SelfSignedCertificate, SelfSignedOptions } from '../certwatcher/selfsigned.js';
