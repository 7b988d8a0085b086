#!/bin/sh
# Build @taskbay/client from a Taskbay checkout and install it into your project:
#   sh client-install.sh /path/to/taskbay /path/to/your-project
set -e
project=$(cd "$2" && pwd)
cd "$1/packages/taskbay-client"
npm pack --pack-destination "$project"     # prepack builds dist/; writes taskbay-client-0.1.0.tgz
cd "$project"
npm install ./taskbay-client-0.1.0.tgz ws  # ws: for subscriptions on Node 20, which has no WebSocket
