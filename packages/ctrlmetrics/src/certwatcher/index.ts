export {
  CertWatcher,
  CertificateLoadError,
  loadCertificatePair,
  setDefaultCertWatcherCounters,
} from './certwatcher.js';
export type { CertificatePair, CertWatcherCounters, CertWatcherOptions, CertificateListener } from './certwatcher.js';
export { generateSelfSignedCertificate } from './selfsigned.js';
export type { SelfSignedCertificate, SelfSignedOptions } from './selfsigned.js';
