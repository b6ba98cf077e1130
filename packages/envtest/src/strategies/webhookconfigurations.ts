/** Mutating and validating webhook configurations: kube's defaults (at decoding and on every write) and checks. */
import { defaultWebhookConfiguration, validateWebhookConfiguration } from '../webhook-configurations.js';
import type { Strategy } from './strategy.js';

function webhookConfigurations(mutating: boolean): Strategy {
  return {
    decode: (o) => defaultWebhookConfiguration(o, mutating),
    validate: (o) => validateWebhookConfiguration(o, mutating),
    prepare: (o) => defaultWebhookConfiguration(o, mutating),
  };
}

export const mutatingwebhookconfigurations = webhookConfigurations(true);
export const validatingwebhookconfigurations = webhookConfigurations(false);
