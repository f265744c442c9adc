import type { Handler } from '../endpoint.js';
import type { OpenApiDocument } from '../openapi.js';
import type { OpenApiJson } from '../responses.js';

/** The document of the endpoints this process mounts, built once when the app is. */
export const openApiJson: Handler<
  Record<never, never>,
  'public',
  { openApiDocument: OpenApiDocument },
  typeof OpenApiJson
> = async (_input, { openApiDocument }) => ({ ...openApiDocument });
