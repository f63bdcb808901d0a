// Why each of upstream's hack/invalid-examples (Gateway API v1.6.1) is invalid: the message of the schema rule it
// breaks, as kube-apiserver reports it (a CEL rule's `message`, or the OpenAPI check's message). Upstream's own test
// (tests/crd/crd_test.go) only asks for a validation error; examples.test.ts asks for this one.
export const EXPECTED: Record<string, string> = {
  'standard/gateway/duplicate-listeners.yaml':
    'spec.listeners: Invalid value: "array": Listener name must be unique within the Gateway',
  'standard/gateway/hostname-tcp.yaml': "hostname must not be specified for protocols ['TCP', 'UDP']",
  'standard/gateway/hostname-udp.yaml': "hostname must not be specified for protocols ['TCP', 'UDP']",
  'standard/gateway/invalid-addresses.yaml':
    'spec.addresses[5].value: Invalid value: "1.1.1": spec.addresses[5].value in body must be of type ipv4',
  'standard/gateway/invalid-listener-name.yaml': 'spec.listeners[0].name in body should match',
  'standard/gateway/invalid-listener-port.yaml': 'spec.listeners[0].port in body should be less than or equal to 65535',
  'standard/gateway/invalid-tls-mode.yaml': 'tls mode must be Terminate for protocol HTTPS',
  'standard/gateway/tlsconfig-tcp.yaml': "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
  'standard/gatewayclass/invalid-controller.yaml': 'spec.controllerName in body should match',
  'standard/httproute/duplicate-header-match.yaml': 'spec.rules[0].matches[0].headers[1]: Duplicate value: "object"',
  'standard/httproute/duplicate-query-match.yaml': 'spec.rules[0].matches[0].queryParams[1]: Duplicate value: "object"',
  'standard/httproute/httproute-portless-backend.yaml': 'Must have port for Service reference',
  'standard/httproute/httproute-portless-service.yaml': 'Must have port for Service reference',
  'standard/httproute/invalid-backend-group.yaml': 'spec.rules[0].backendRefs[0].group in body should match',
  'standard/httproute/invalid-backend-kind.yaml': 'spec.rules[0].backendRefs[0].kind in body should match',
  'standard/httproute/invalid-backend-port.yaml':
    'spec.rules[0].backendRefs[0].port in body should be less than or equal to 65535',
  'standard/httproute/invalid-filter-duplicate-header.yaml': 'requestHeaderModifier.remove[1]: Duplicate value: "foo"',
  'standard/httproute/invalid-filter-duplicate.yaml': 'RequestHeaderModifier filter cannot be repeated',
  'standard/httproute/invalid-filter-empty.yaml':
    'filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type',
  'standard/httproute/invalid-filter-wrong-field.yaml':
    'filter.requestRedirect must be nil if the filter.type is not RequestRedirect',
  'standard/httproute/invalid-header-name.yaml': 'spec.rules[0].matches[0].headers[0].name in body should match',
  'standard/httproute/invalid-hostname.yaml': 'spec.hostnames[0] in body should match',
  'standard/httproute/invalid-httpredirect-hostname.yaml': 'requestRedirect.hostname in body should match',
  'standard/httproute/invalid-method.yaml': 'Unsupported value: "NOTREAL"',
  'standard/httproute/invalid-path-alphanum-specialchars-mix.yaml': 'must only contain valid characters',
  'standard/httproute/invalid-path-specialchars.yaml': 'must only contain valid characters',
  'standard/httproute/invalid-request-redirect-with-backendref.yaml':
    'RequestRedirect filter must not be used together with backendRefs',
  'standard/referencegrant/missing-from.yaml': 'spec.from: Required value',
  'standard/referencegrant/missing-ns.yaml': 'spec.from[0].namespace: Required value',
  'standard/referencegrant/missing-to.yaml': 'spec.to: Required value',
  'standard/tlsroute/invalid-hostname.yaml': 'Hostnames must be valid based on RFC-1123',
  'standard/tlsroute/no-hostname.yaml': 'spec.hostnames: Required value',
  'experimental/httproute/invalid-filter-externalauth-bad-http-path.yaml':
    'externalAuth.http.path in body should match',
  'experimental/httproute/invalid-filter-externalauth-empty.yaml':
    'filter.externalAuth must be specified for ExternalAuth filter.type',
  'experimental/httproute/invalid-filter-externalauth-no-protocol.yaml': 'externalAuth.protocol: Required value',
  'experimental/httproute/invalid-header-value.yaml': 'responseHeaderModifier.add[0].value in body should match',
};
