'use strict';

// The AWS SDK defines a global `awslambda` on import; it is not our leak.
module.exports = {
    globals: 'awslambda'
};
