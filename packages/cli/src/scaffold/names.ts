/**
 * Validation of the names `ctrlmetrics init` puts into generated manifests. Kubernetes derives object names
 * (`<project>-controller-manager-metrics-service`), the namespace (`<project>-system`) and labels from them,
 * so they must be DNS-1123 labels/subdomains.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Longest generated suffix: `-controller-manager-metrics-service` (35); a Service name is a DNS-1035 label of ≤ 63. */
const LONGEST_SUFFIX = '-controller-manager-metrics-service'.length;

/** Returns an error message when `name` cannot be a project name, otherwise undefined. */
export function projectNameProblem(name: string): string | undefined {
  if (!name) return 'project name is empty: pass --project-name NAME (lowercase letters, digits and "-")';
  if (!DNS1123_LABEL.test(name)) {
    return `invalid project name "${name}": it must be a DNS-1123 label (lowercase letters, digits and "-", starting and ending with a letter or digit)`;
  }
  if (!/^[a-z]/.test(name)) {
    return `invalid project name "${name}": it must start with a letter (Service names are DNS-1035 labels)`;
  }
  const max = 63 - LONGEST_SUFFIX;
  if (name.length > max) {
    return `invalid project name "${name}": at most ${max} characters, so that "${name}${'-controller-manager-metrics-service'}" stays within 63`;
  }
  return undefined;
}

/** Returns an error message when `domain` is not a DNS-1123 subdomain, otherwise undefined. */
export function domainProblem(domain: string): string | undefined {
  if (
    domain.length > 253 ||
    domain.length === 0 ||
    !domain.split('.').every((l) => DNS1123_LABEL.test(l) && l.length <= 63)
  ) {
    return `invalid domain "${domain}": it must be a DNS-1123 subdomain such as example.com`;
  }
  return undefined;
}
