/**
 * Type names for API definitions that `ctrlmetrics generate crd` maps as controller-gen maps Go's: TypeScript has
 * one `number`, so a field says which integer it is (`int32`, `int64`) or carries a `Type` marker; Kubernetes'
 * well-known value types get their fixed schemas. At run time they are the plain JSON values.
 */

/** A 32-bit integer (`type: integer, format: int32`). */
export type int32 = number;
/** A 64-bit integer (`type: integer, format: int64`). */
export type int64 = number;
/** A resource quantity such as `500m` or `1Gi` (int-or-string with the quantity pattern). */
export type Quantity = string | number;
/** An integer or a string, such as a port number or name (`x-kubernetes-int-or-string`). */
export type IntOrString = string | number;
/** An RFC 3339 time (`format: date-time`), as `metav1.Time`. */
export type Time = string;
/** An RFC 3339 time with microseconds (`format: date-time`), as `metav1.MicroTime`. */
export type MicroTime = string;
/** A Go duration such as `1m30s` (`type: string`), as `metav1.Duration`. */
export type Duration = string;
/** An embedded object kept as it is (`type: object` preserving unknown fields), as `runtime.RawExtension`. */
export type RawExtension = Record<string, unknown>;
/** Any JSON value (no type, preserving unknown fields), as `apiextensionsv1.JSON`. */
export type JSONValue = unknown;
