import { runWorker } from './run-worker.js';
import { productionThirdParties } from './third-parties.js';

/** The worker as the image runs it (`node dist/worker/main.js`): on its production third parties only. */
await runWorker({ thirdParties: productionThirdParties });
