import sys

from pipeline.launch import main

sys.exit(main())
