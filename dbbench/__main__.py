from dbbench.cli import main

main()
