from httpbench.cli import main

main()
