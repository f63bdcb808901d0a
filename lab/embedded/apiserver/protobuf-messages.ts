// Our own description of the Kubernetes protobuf messages that kubectl 1.32's typed commands send
// (`application/vnd.kubernetes.protobuf`), written for this server: only the messages and fields those commands put on
// the wire, by field number. Go's generated marshallers write every non-pointer field, empty or not, so a message's
// empty strings, zero counts and empty sub-messages are here too; pointer and repeated fields appear only where the
// commands set them. A field that is not here makes the request fail with 415 (see protobuf.ts), never a silent drop.
//
// Commands covered (each is exercised by protobuf.test.ts with the real kubectl):
//   create namespace | configmap (--from-literal, --from-file) | secret generic | serviceaccount |
//          deployment --image --replicas --port | token <sa> [--audience --duration] |
//          service clusterip|nodeport|loadbalancer | role | rolebinding | clusterrole | clusterrolebinding
//   auth can-i (resource and non-resource URL) | auth can-i --list | auth whoami
// (`kubectl run` and `expose` send JSON, `scale` and `rollout restart` JSON patches, `apply` JSON: checked with -v=8.)
//
// Field numbers are those of the Kubernetes API's protobuf encoding; names are the fields' JSON names.

/** A field: its JSON name and type. `T[]` is repeated, `map<string,T>` a map; other names are messages below. */
export type FieldSpec = readonly [name: string, type: string];
export type MessageSpec = Readonly<Record<number, FieldSpec>>;

export const MESSAGES: Readonly<Record<string, MessageSpec>> = {
  // The envelope: after the 4-byte magic `k8s\0`.
  'runtime.Unknown': {
    1: ['typeMeta', 'runtime.TypeMeta'],
    2: ['raw', 'bytes'],
    3: ['contentEncoding', 'string'],
    4: ['contentType', 'string'],
  },
  'runtime.TypeMeta': { 1: ['apiVersion', 'string'], 2: ['kind', 'string'] },

  'meta.v1.ObjectMeta': {
    1: ['name', 'string'],
    2: ['generateName', 'string'],
    3: ['namespace', 'string'],
    4: ['selfLink', 'string'],
    5: ['uid', 'string'],
    6: ['resourceVersion', 'string'],
    7: ['generation', 'int64'],
    8: ['creationTimestamp', 'Time'],
    11: ['labels', 'map<string,string>'],
    12: ['annotations', 'map<string,string>'],
  },
  'meta.v1.LabelSelector': { 1: ['matchLabels', 'map<string,string>'] },

  // core/v1
  'core.v1.Namespace': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['spec', 'core.v1.NamespaceSpec'],
    3: ['status', 'core.v1.NamespaceStatus'],
  },
  'core.v1.NamespaceSpec': {},
  'core.v1.NamespaceStatus': { 1: ['phase', 'string'] },
  'core.v1.ConfigMap': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['data', 'map<string,string>'],
    3: ['binaryData', 'map<string,bytes>'],
  },
  'core.v1.Secret': { 1: ['metadata', 'meta.v1.ObjectMeta'], 2: ['data', 'map<string,bytes>'], 3: ['type', 'string'] },
  'core.v1.ServiceAccount': { 1: ['metadata', 'meta.v1.ObjectMeta'] },
  'core.v1.PodTemplateSpec': { 1: ['metadata', 'meta.v1.ObjectMeta'], 2: ['spec', 'core.v1.PodSpec'] },
  'core.v1.PodSpec': {
    2: ['containers', 'core.v1.Container[]'],
    3: ['restartPolicy', 'string'],
    6: ['dnsPolicy', 'string'],
    8: ['serviceAccountName', 'string'],
    9: ['serviceAccount', 'string'],
    10: ['nodeName', 'string'],
    11: ['hostNetwork', 'bool'],
    12: ['hostPID', 'bool'],
    13: ['hostIPC', 'bool'],
    16: ['hostname', 'string'],
    17: ['subdomain', 'string'],
    19: ['schedulerName', 'string'],
    24: ['priorityClassName', 'string'],
  },
  'core.v1.Container': {
    1: ['name', 'string'],
    2: ['image', 'string'],
    3: ['command', 'string[]'],
    4: ['args', 'string[]'],
    5: ['workingDir', 'string'],
    6: ['ports', 'core.v1.ContainerPort[]'],
    7: ['env', 'core.v1.EnvVar[]'],
    8: ['resources', 'core.v1.ResourceRequirements'],
    13: ['terminationMessagePath', 'string'],
    14: ['imagePullPolicy', 'string'],
    16: ['stdin', 'bool'],
    17: ['stdinOnce', 'bool'],
    18: ['tty', 'bool'],
    20: ['terminationMessagePolicy', 'string'],
  },
  'core.v1.ContainerPort': {
    1: ['name', 'string'],
    2: ['hostPort', 'int32'],
    3: ['containerPort', 'int32'],
    4: ['protocol', 'string'],
    5: ['hostIP', 'string'],
  },
  'core.v1.EnvVar': { 1: ['name', 'string'], 2: ['value', 'string'] },
  'core.v1.ResourceRequirements': {},
  'core.v1.Service': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['spec', 'core.v1.ServiceSpec'],
    3: ['status', 'core.v1.ServiceStatus'],
  },
  'core.v1.ServiceSpec': {
    1: ['ports', 'core.v1.ServicePort[]'],
    2: ['selector', 'map<string,string>'],
    3: ['clusterIP', 'string'],
    4: ['type', 'string'],
    7: ['sessionAffinity', 'string'],
    8: ['loadBalancerIP', 'string'],
    10: ['externalName', 'string'],
    11: ['externalTrafficPolicy', 'string'],
    12: ['healthCheckNodePort', 'int32'],
    13: ['publishNotReadyAddresses', 'bool'],
  },
  'core.v1.ServicePort': {
    1: ['name', 'string'],
    2: ['protocol', 'string'],
    3: ['port', 'int32'],
    4: ['targetPort', 'IntOrString'],
    5: ['nodePort', 'int32'],
  },
  'core.v1.ServiceStatus': { 1: ['loadBalancer', 'core.v1.LoadBalancerStatus'] },
  'core.v1.LoadBalancerStatus': {},

  // apps/v1
  'apps.v1.Deployment': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['spec', 'apps.v1.DeploymentSpec'],
    3: ['status', 'apps.v1.DeploymentStatus'],
  },
  'apps.v1.DeploymentSpec': {
    1: ['replicas', 'int32'],
    2: ['selector', 'meta.v1.LabelSelector'],
    3: ['template', 'core.v1.PodTemplateSpec'],
    4: ['strategy', 'apps.v1.DeploymentStrategy'],
    5: ['minReadySeconds', 'int32'],
    7: ['paused', 'bool'],
  },
  'apps.v1.DeploymentStrategy': { 1: ['type', 'string'] },
  'apps.v1.DeploymentStatus': {
    1: ['observedGeneration', 'int64'],
    2: ['replicas', 'int32'],
    3: ['updatedReplicas', 'int32'],
    4: ['availableReplicas', 'int32'],
    5: ['unavailableReplicas', 'int32'],
    7: ['readyReplicas', 'int32'],
  },

  // rbac.authorization.k8s.io/v1
  'rbac.v1.Role': { 1: ['metadata', 'meta.v1.ObjectMeta'], 2: ['rules', 'rbac.v1.PolicyRule[]'] },
  'rbac.v1.ClusterRole': { 1: ['metadata', 'meta.v1.ObjectMeta'], 2: ['rules', 'rbac.v1.PolicyRule[]'] },
  'rbac.v1.PolicyRule': {
    1: ['verbs', 'string[]'],
    2: ['apiGroups', 'string[]'],
    3: ['resources', 'string[]'],
    4: ['resourceNames', 'string[]'],
    5: ['nonResourceURLs', 'string[]'],
  },
  'rbac.v1.RoleBinding': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['subjects', 'rbac.v1.Subject[]'],
    3: ['roleRef', 'rbac.v1.RoleRef'],
  },
  'rbac.v1.ClusterRoleBinding': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['subjects', 'rbac.v1.Subject[]'],
    3: ['roleRef', 'rbac.v1.RoleRef'],
  },
  'rbac.v1.Subject': {
    1: ['kind', 'string'],
    2: ['apiGroup', 'string'],
    3: ['name', 'string'],
    4: ['namespace', 'string'],
  },
  'rbac.v1.RoleRef': { 1: ['apiGroup', 'string'], 2: ['kind', 'string'], 3: ['name', 'string'] },

  // authentication.k8s.io/v1: create token, auth whoami
  'authentication.v1.TokenRequest': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['spec', 'authentication.v1.TokenRequestSpec'],
    3: ['status', 'authentication.v1.TokenRequestStatus'],
  },
  'authentication.v1.TokenRequestSpec': { 1: ['audiences', 'string[]'], 4: ['expirationSeconds', 'int64'] },
  'authentication.v1.TokenRequestStatus': { 1: ['token', 'string'], 2: ['expirationTimestamp', 'Time'] },
  'authentication.v1.SelfSubjectReview': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['status', 'authentication.v1.SelfSubjectReviewStatus'],
  },
  'authentication.v1.SelfSubjectReviewStatus': { 1: ['userInfo', 'authentication.v1.UserInfo'] },
  'authentication.v1.UserInfo': { 1: ['username', 'string'], 2: ['uid', 'string'] },

  // authorization.k8s.io/v1: auth can-i
  'authorization.v1.SelfSubjectAccessReview': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['spec', 'authorization.v1.SelfSubjectAccessReviewSpec'],
    3: ['status', 'authorization.v1.SubjectAccessReviewStatus'],
  },
  'authorization.v1.SelfSubjectAccessReviewSpec': {
    1: ['resourceAttributes', 'authorization.v1.ResourceAttributes'],
    2: ['nonResourceAttributes', 'authorization.v1.NonResourceAttributes'],
  },
  'authorization.v1.ResourceAttributes': {
    1: ['namespace', 'string'],
    2: ['verb', 'string'],
    3: ['group', 'string'],
    4: ['version', 'string'],
    5: ['resource', 'string'],
    6: ['subresource', 'string'],
    7: ['name', 'string'],
  },
  'authorization.v1.NonResourceAttributes': { 1: ['path', 'string'], 2: ['verb', 'string'] },
  // auth can-i --list
  'authorization.v1.SelfSubjectRulesReview': {
    1: ['metadata', 'meta.v1.ObjectMeta'],
    2: ['spec', 'authorization.v1.SelfSubjectRulesReviewSpec'],
    3: ['status', 'authorization.v1.SubjectRulesReviewStatus'],
  },
  'authorization.v1.SelfSubjectRulesReviewSpec': { 1: ['namespace', 'string'] },
  'authorization.v1.SubjectRulesReviewStatus': { 3: ['incomplete', 'bool'], 4: ['evaluationError', 'string'] },
  'authorization.v1.SubjectAccessReviewStatus': {
    1: ['allowed', 'bool'],
    2: ['reason', 'string'],
    3: ['evaluationError', 'string'],
    4: ['denied', 'bool'],
  },

  // Special encodings, converted to their JSON forms by protobuf.ts.
  Time: { 1: ['seconds', 'int64'], 2: ['nanos', 'int32'] },
  IntOrString: { 1: ['type', 'int64'], 2: ['intVal', 'int32'], 3: ['strVal', 'string'] },
};

/** `apiVersion kind` → the message of the object kubectl sends. */
export const KINDS: Readonly<Record<string, string>> = {
  'v1 Namespace': 'core.v1.Namespace',
  'v1 ConfigMap': 'core.v1.ConfigMap',
  'v1 Secret': 'core.v1.Secret',
  'v1 ServiceAccount': 'core.v1.ServiceAccount',
  'v1 Service': 'core.v1.Service',
  'apps/v1 Deployment': 'apps.v1.Deployment',
  'rbac.authorization.k8s.io/v1 Role': 'rbac.v1.Role',
  'rbac.authorization.k8s.io/v1 ClusterRole': 'rbac.v1.ClusterRole',
  'rbac.authorization.k8s.io/v1 RoleBinding': 'rbac.v1.RoleBinding',
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding': 'rbac.v1.ClusterRoleBinding',
  'authentication.k8s.io/v1 TokenRequest': 'authentication.v1.TokenRequest',
  'authentication.k8s.io/v1 SelfSubjectReview': 'authentication.v1.SelfSubjectReview',
  'authorization.k8s.io/v1 SelfSubjectAccessReview': 'authorization.v1.SelfSubjectAccessReview',
  'authorization.k8s.io/v1 SelfSubjectRulesReview': 'authorization.v1.SelfSubjectRulesReview',
};
