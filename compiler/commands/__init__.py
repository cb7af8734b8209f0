"""The compiler's command line (`init`, `build`, `lint`, `watch`, `claim`) and what it prints.
"""
