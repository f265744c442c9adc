import type { ApiHandler } from '../endpoint-table.js';
import type { OpenApiDocument } from '../openapi.js';

/** The document of the endpoints this process mounts, built once when the app is. */
export const openApiJson: ApiHandler<'openApiJson', { openApiDocument: OpenApiDocument }> = async (
  _input,
  { openApiDocument },
) => ({ ...openApiDocument });
