from dbbench.entry import main

main()
