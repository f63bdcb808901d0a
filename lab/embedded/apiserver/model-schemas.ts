// The kubernetes-models validator (a compiled JSON Schema of the Kubernetes OpenAPI definition) of each built-in
// resource the embedded API server serves. validation.ts loads them at start; scripts/bundle-deps.ts bundles exactly
// these (with what they import: ~250 modules of kubernetes-models otherwise), so the table has no imports of its own.
export const MODEL_SCHEMAS: Readonly<Record<string, string>> = {
  namespaces: 'IoK8sApiCoreV1Namespace',
  pods: 'IoK8sApiCoreV1Pod',
  services: 'IoK8sApiCoreV1Service',
  endpoints: 'IoK8sApiCoreV1Endpoints',
  configmaps: 'IoK8sApiCoreV1ConfigMap',
  secrets: 'IoK8sApiCoreV1Secret',
  serviceaccounts: 'IoK8sApiCoreV1ServiceAccount',
  events: 'IoK8sApiCoreV1Event',
  nodes: 'IoK8sApiCoreV1Node',
  deployments: 'IoK8sApiAppsV1Deployment',
  replicasets: 'IoK8sApiAppsV1ReplicaSet',
  endpointslices: 'IoK8sApiDiscoveryV1EndpointSlice',
  leases: 'IoK8sApiCoordinationV1Lease',
  roles: 'IoK8sApiRbacV1Role',
  rolebindings: 'IoK8sApiRbacV1RoleBinding',
  clusterroles: 'IoK8sApiRbacV1ClusterRole',
  clusterrolebindings: 'IoK8sApiRbacV1ClusterRoleBinding',
  customresourcedefinitions: 'IoK8sApiextensionsApiserverPkgApisApiextensionsV1CustomResourceDefinition',
  validatingadmissionpolicies: 'IoK8sApiAdmissionregistrationV1ValidatingAdmissionPolicy',
  validatingadmissionpolicybindings: 'IoK8sApiAdmissionregistrationV1ValidatingAdmissionPolicyBinding',
};
