import { IllegalStateError } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';

// The SDK logs every worker state change at INFO, which buries test output; warnings and errors stay.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch (err) {
  // A previous test file in this same process installed it already.
  if (!(err instanceof IllegalStateError)) throw err;
}
