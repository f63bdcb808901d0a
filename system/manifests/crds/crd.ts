// The CustomResourceDefinition around a kind's spec and status schemas: names, scope, one served and stored version
// with the status subresource and printer columns, and the label every CRD of the project carries.
import { type Schema, str } from './schema-blocks.ts';

export interface CrdSpec {
  group: string;
  kind: string;
  plural: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope: 'Namespaced' | 'Cluster';
  version: string;
  spec: Schema;
  status: Schema;
  specRequired?: boolean;
  columns?: { name: string; type: string; jsonPath: string; description?: string; priority?: number }[];
  annotations?: Record<string, string>;
  description: string;
}

export function crd(s: CrdSpec): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${s.plural}.${s.group}`,
      ...(s.annotations ? { annotations: s.annotations } : {}),
      labels: { 'app.orch.io/part-of': 'gwvendor' },
    },
    spec: {
      group: s.group,
      names: {
        kind: s.kind,
        listKind: `${s.kind}List`,
        plural: s.plural,
        singular: s.singular ?? s.kind.toLowerCase(),
        ...(s.shortNames ? { shortNames: s.shortNames } : {}),
        ...(s.categories ? { categories: s.categories } : {}),
      },
      scope: s.scope,
      versions: [
        {
          name: s.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          ...(s.columns ? { additionalPrinterColumns: s.columns } : {}),
          schema: {
            openAPIV3Schema: {
              description: s.description,
              type: 'object',
              properties: {
                apiVersion: str(),
                kind: str(),
                metadata: { type: 'object' },
                spec: s.spec,
                status: s.status,
              },
              ...(s.specRequired === false ? {} : { required: ['spec'] }),
            },
          },
        },
      ],
    },
  };
}
