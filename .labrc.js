'use strict';

// The AWS SDK defines a global `awslambda` on import; playwright-core (the browser
// tests) brings zod's registry and signal-exit's emitter; selfsigned (SMTP TLS) brings
// an old tslib (via @peculiar/x509's tsyringe) that sets its helpers on the global. None is our leak.
module.exports = {
    globals: 'awslambda,__zod_globalConfig,__zod_globalRegistry,Symbol(signal-exit emitter),__spreadArray'
};
