// The options of the verbs (core.ts): what a write asks (dryRun, fieldManager, fieldValidation, the requester), what
// a list asks (selectors, limit, continue), what a delete asks (DeleteOptions), and the hooks the server attaches to
// writes (ClusterIP allocation, RBAC escalation prevention, validating admission policies). Parsed from requests by handlers/write.ts.
import type { AdmissionRequest } from './admission/matching.ts';
import type { UserInfo } from './authn.ts';
import type { ResourceType } from './resources.ts';
import type { K8sObject } from './store.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun: boolean;
  fieldManager?: string;
  fieldValidation: FieldValidation;
  /** Warnings to return in `Warning` headers (unknown fields with fieldValidation=Warn). */
  warnings: string[];
  /** Derived from the User-Agent when fieldManager is not given. */
  defaultManager: string;
  /** The requester (admission hooks check it); undefined for the server's own writes (bootstrap). */
  user?: UserInfo;
}

export interface ListOptions {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number;
  continue?: string | null;
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun: boolean;
  /** The requester (admission policies see it as `request.userInfo`). */
  user?: UserInfo;
  /** Warnings to return in `Warning` headers (admission policies' Warn action). */
  warnings?: string[];
}

/** Hooks other parts of the server attach to writes. */
export interface CoreHooks {
  /** ClusterIP allocation for Services (returns an unused address). */
  allocateClusterIp?: (svc: K8sObject) => string | undefined;
  /**
   * Every create and update, after defaulting and validation and before anything is stored (dry runs too): throws to
   * refuse the write. `requestName` is the name in the request's URL (none for a POST). RBAC escalation prevention.
   */
  admitWrite?: (w: {
    rt: ResourceType;
    obj: K8sObject;
    old?: K8sObject;
    opts: WriteOptions;
    requestName?: string;
  }) => void;
  /**
   * Validating admission (ValidatingAdmissionPolicies) of every create, update and delete, after the kind's own
   * validation and before storage (dry runs too): throws to refuse; Warn actions add to `warnings`.
   */
  validatingAdmission?: (req: AdmissionRequest, warnings: string[]) => void;
  /** After a create or update is stored (not dry runs): status written by the server itself (a policy's typeChecking). */
  afterWrite?: (rt: ResourceType, obj: K8sObject) => void;
}
