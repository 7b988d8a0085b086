#!/bin/sh
# Build @taskbay/verify from a Taskbay checkout and install it into your agent's project. It has
# no dependencies, so nothing else is fetched:
#   sh verify-install.sh /path/to/taskbay /path/to/your-agent
set -e
project=$(cd "$2" && pwd)
cd "$1/packages/taskbay-verify"
npm pack --pack-destination "$project"   # prepack builds dist/; writes taskbay-verify-0.1.0.tgz
cd "$project"
npm install ./taskbay-verify-0.1.0.tgz
