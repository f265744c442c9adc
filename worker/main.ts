import { runWorker } from './run-worker.js';
import { loadThirdParties } from './third-parties.js';

/** The worker as the image runs it (`node dist/worker/main.js`): the third parties THIRD_PARTIES names. */
await runWorker({ thirdParties: loadThirdParties });
