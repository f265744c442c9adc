import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ApiError } from './errors.js';

/** Catalog and admin calls need `Authorization: Bearer <ADMIN_TOKEN>`. */
export function requireAdmin(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, _res, next) => {
    const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
    // Comparing fixed-length digests keeps the check constant-time whatever the token's length.
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      throw new ApiError(401, 'UNAUTHORIZED', 'this call needs the admin bearer token');
    }
    next();
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
