'use strict';

// The AWS SDK defines a global `awslambda` on import; playwright-core (the browser
// tests) brings zod's registry and signal-exit's emitter. None is our leak.
module.exports = {
    globals: 'awslambda,__zod_globalConfig,__zod_globalRegistry,Symbol(signal-exit emitter)'
};
