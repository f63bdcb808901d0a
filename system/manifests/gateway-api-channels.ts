// The release channels of the vendored Gateway API bundles (gateway-api/<channel>-install.yaml), in a module of its
// own with no imports: lab:up checks its --gateway-api-channel flag against it before it starts the lab process, and
// loads nothing else for that (scripts/lab-up.ts).
export const GATEWAY_API_CHANNELS = ['standard', 'experimental'] as const;
export type GatewayApiChannel = (typeof GATEWAY_API_CHANNELS)[number];
