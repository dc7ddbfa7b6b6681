from ci_eval.cli import main

raise SystemExit(main())
