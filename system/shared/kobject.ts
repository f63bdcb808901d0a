// The shape of a Kubernetes object as JSON (apimachinery's TypeMeta + ObjectMeta + spec/status), typed for the
// metadata fields the code of this project reads: one type for the control plane (which types spec and status per
// kind, system/controlplane/model.ts) and the embedded cluster's controllers and node agent (which read objects
// straight from the API server). Objects are plain JSON: nothing here validates them.

/** metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.ObjectMeta, the fields read here (managedFields and the rest pass through untyped). */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

/** A Kubernetes object; `S` and `St` type its spec and status where the reader knows the kind. */
export interface KObject<S = unknown, St = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: S;
  status?: St;
}

/** An object as an API server serves it: `metadata.uid` is always set (caches and list-watches key by it). */
export type ServedObject<S = unknown, St = unknown> = KObject<S, St> & { metadata: { uid: string } };
