import sys

from conceptagent_ros.cli.main import main

sys.exit(main())
