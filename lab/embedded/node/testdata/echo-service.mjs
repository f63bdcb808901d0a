// A gRPC service without .proto files (JSON messages), shared by the test server and client pods.
export const echoService = {
  echo: {
    path: '/gwlab.test.Echo/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: (v) => Buffer.from(JSON.stringify(v)),
    requestDeserialize: (b) => JSON.parse(b.toString()),
    responseSerialize: (v) => Buffer.from(JSON.stringify(v)),
    responseDeserialize: (b) => JSON.parse(b.toString()),
  },
};
