from bench.engine.cli import main

raise SystemExit(main())
