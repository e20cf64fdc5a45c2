from svmrepro.app import main

main()
