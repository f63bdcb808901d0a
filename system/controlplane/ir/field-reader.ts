// How a TrafficPolicy field is read (policies.ts makes one per policy, the per-field readers of policy-<field>.ts
// use it): problems are collected per field path, durations converted (an invalid one is a problem).
export interface FieldReader {
  problem(field: string, message: string): void;
  duration(field: string, v: string | undefined): string | undefined;
}
