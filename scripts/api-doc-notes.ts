// The hand-written introduction of docs/api.md (each area's note is in functions/api-areas.ts). Everything else on
// that page is generated from the endpoint declarations by scripts/generate-api-docs.ts.

export const API_INTRO = `Every endpoint answers under \`/api\` (\`http://localhost:7071/api\` locally). Callers identify as the
deployment says (\`AUTH_MODE\`): locally, the dev users \`user_001\`..\`user_003\` with the \`x-ms-client-principal-id\`
header; in Azure, an Entra ID bearer token or App Service authentication. A caller reaches only their own data: a
\`userId\` in a path, query, JSON body or form field that is not the caller's is a 403 before anything changes, and
another user's session, conversation or document answers exactly like an unknown one.

Errors are RFC 9457 \`application/problem+json\` with a stable \`code\` and a message that says what to fix; bad input
changes nothing. Bodies are checked as they are read: over the endpoint's limit → 413, JSON nested deeper than 64
levels → 400, a body that is neither JSON nor (where accepted) \`multipart/form-data\` → 415. Ids that become storage
keys have closed formats (UUIDs for sessions and chat messages), so a malformed one is a 400.

The same endpoints are an OpenAPI 3.1 document at \`GET /api/openapi.json\` (for tools and client generators),
rendered as a page at \`/api/docs\`. [\`api.http\`](../api.http) holds a runnable request for each endpoint. The
event protocol of a turn's stream (event types, SSE, Web PubSub, resume, \`discard\`, tickets) is in [streaming.md](streaming.md).`;
