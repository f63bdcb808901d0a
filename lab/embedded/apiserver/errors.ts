// Kubernetes `Status` errors. Every failure the server answers is one of these, so clients (kubectl, client-go,
// client-node) print the message and branch on `reason` exactly as they do against a real API server.

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details?: StatusDetails;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers?: Record<string, string>;
  /** The Status's ListMeta (`continue` of an expired list continuation). */
  listMeta?: { continue?: string };
  constructor(
    code: number,
    reason: string,
    message: string,
    details?: StatusDetails,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.headers = headers;
  }
  toStatus(): Status {
    const s: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.listMeta ? { ...this.listMeta } : {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) s.details = this.details;
    return s;
  }
}

/** `pods` or `deployments.apps`: how Kubernetes names a group-resource in messages. */
export function qualifiedResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

export const errors = {
  notFound(group: string, resource: string, name: string): ApiError {
    return new ApiError(404, 'NotFound', `${qualifiedResource(group, resource)} "${name}" not found`, {
      name,
      group: group || undefined,
      kind: resource,
    });
  },
  noResource(): ApiError {
    return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  },
  alreadyExists(group: string, resource: string, name: string): ApiError {
    return new ApiError(409, 'AlreadyExists', `${qualifiedResource(group, resource)} "${name}" already exists`, {
      name,
      group: group || undefined,
      kind: resource,
    });
  },
  conflict(group: string, resource: string, name: string, why?: string): ApiError {
    return new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(group, resource)} "${name}": ${
        why ?? 'the object has been modified; please apply your changes to the latest version and try again'
      }`,
      { name, group: group || undefined, kind: resource },
    );
  },
  applyConflict(group: string, resource: string, name: string, conflicts: { manager: string; field: string }[]) {
    // `manager` is already quoted, with its operation details (managedfields.ts managerLabel).
    const lines = conflicts.map((c) => `conflict with ${c.manager}: ${c.field}`);
    const msg =
      conflicts.length === 1
        ? `Apply failed with 1 conflict: ${lines[0]}`
        : `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
    return new ApiError(409, 'Conflict', msg, {
      name,
      group: group || undefined,
      kind: resource,
      causes: conflicts.map((c) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with ${c.manager}`,
        field: c.field,
      })),
    });
  },
  invalid(group: string, kind: string, name: string, causes: FieldError[]): ApiError {
    const list = causes.map((c) => `${c.field}: ${c.message}`);
    const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
    return new ApiError(422, 'Invalid', `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${summary}`, {
      name,
      group: group || undefined,
      kind,
      causes: causes.map((c) => ({ reason: c.reason, message: c.detail ?? c.message, field: c.field })),
    });
  },
  badRequest(message: string, causes?: StatusCause[]): ApiError {
    return new ApiError(400, 'BadRequest', message, causes ? { causes } : undefined);
  },
  unauthorized(): ApiError {
    return new ApiError(401, 'Unauthorized', 'Unauthorized');
  },
  forbidden(message: string, details: StatusDetails): ApiError {
    return new ApiError(403, 'Forbidden', message, details);
  },
  methodNotAllowed(): ApiError {
    return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  },
  notAcceptable(): ApiError {
    return new ApiError(
      406,
      'NotAcceptable',
      'the server was unable to respond with a content type that the client supports',
    );
  },
  unsupportedMediaType(contentType: string, accepted: string[]): ApiError {
    return new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format ${JSON.stringify(contentType)} - accepted media types include: ${accepted.join(', ')}`,
    );
  },
  tooLarge(limit: number): ApiError {
    return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
  },
  expired(requested: string | number, oldest: number): ApiError {
    return new ApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
  },
  /**
   * A `continue` token older than the history: Kubernetes' answer when etcd compacted the list's revision, with a
   * token that continues at the latest revision (inconsistently, as the message says).
   */
  continueExpired(latestToken: string): ApiError {
    const e = new ApiError(
      410,
      'Expired',
      'The provided continue parameter is too old to display a consistent list result. You can start a new list ' +
        'without the continue parameter, or use the continue token in this response to retrieve the remainder of ' +
        'the results. Continuing with the provided token results in an inconsistent list - objects that were ' +
        'created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
    e.listMeta = { continue: latestToken };
    return e;
  },
  gone(message: string): ApiError {
    return new ApiError(410, 'Gone', message);
  },
  internal(err: unknown): ApiError {
    return new ApiError(
      500,
      'InternalError',
      `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`,
    );
  },
  timeout(message: string): ApiError {
    return new ApiError(504, 'Timeout', message);
  },
};

/** One field problem, in the form of Kubernetes' field.Error. */
export interface FieldError {
  /** JSON-path style: `spec.containers[0].image`. */
  field: string;
  /** `Required value`, `Invalid value: "x": must be ...`, ... */
  message: string;
  /** FieldValueRequired | FieldValueInvalid | FieldValueNotSupported | FieldValueTypeInvalid | FieldValueDuplicate | FieldValueForbidden | FieldValueTooLong */
  reason: string;
  detail?: string;
}

export const fieldErrors = {
  required(field: string, detail?: string): FieldError {
    return { field, reason: 'FieldValueRequired', message: detail ? `Required value: ${detail}` : 'Required value' };
  },
  invalid(field: string, value: unknown, detail: string): FieldError {
    return {
      field,
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${fmtValue(value)}: ${detail}`,
    };
  },
  notSupported(field: string, value: unknown, supported: string[]): FieldError {
    return {
      field,
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${fmtValue(value)}: supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
    };
  },
  typeInvalid(field: string, value: unknown, detail: string): FieldError {
    return { field, reason: 'FieldValueTypeInvalid', message: `Invalid value: ${fmtValue(value)}: ${detail}` };
  },
  duplicate(field: string, value: unknown): FieldError {
    return { field, reason: 'FieldValueDuplicate', message: `Duplicate value: ${fmtValue(value)}` };
  },
  forbidden(field: string, detail: string): FieldError {
    return { field, reason: 'FieldValueForbidden', message: `Forbidden: ${detail}` };
  },
};

function fmtValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  return `"${typeof v}"`;
}
