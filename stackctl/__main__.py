from stackctl.cli import main

main()
