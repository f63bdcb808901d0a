// The CustomResourceDefinition around a kind's spec and status schemas: names, scope, one served and stored version
// with the status subresource and printer columns, and the label every CRD of the project carries.
import { type Schema, str } from './schema-blocks.ts';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** The column every CRD of the project ends with, as kubectl shows for built-in kinds. */
const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** A column showing one condition's `status` (or `reason`), named after the condition. */
export function conditionColumn(type: string, field: 'status' | 'reason' = 'status'): PrinterColumn {
  return { name: type, type: 'string', jsonPath: `.status.conditions[?(@.type=="${type}")].${field}` };
}

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
  /** The kind's own printer columns; every CRD ends with Age. */
  columns?: PrinterColumn[];
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
          additionalPrinterColumns: [...(s.columns ?? []), AGE_COLUMN],
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
