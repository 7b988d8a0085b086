#!/bin/sh
# Build @taskbay/verify and @taskbay/agent from a Taskbay checkout and install them into your project:
#   sh agent-install.sh /path/to/taskbay /path/to/your-project
set -e
project=$(cd "$2" && pwd)
for pkg in taskbay-verify taskbay-agent; do
  (cd "$1/packages/$pkg" && npm pack --pack-destination "$project")   # prepack builds dist/
done
cd "$project"
npm install ./taskbay-verify-0.1.0.tgz ./taskbay-agent-0.1.0.tgz
