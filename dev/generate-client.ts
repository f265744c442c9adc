import { ensurePrismaClient } from './migrate.js';
import { runMain } from './startup-error.js';

/** `postinstall`: what @prisma/client's own install script would do, were npm allowed to run it. */
runMain(ensurePrismaClient);
