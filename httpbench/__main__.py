from httpbench.entry import main

main()
