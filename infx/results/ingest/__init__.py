"""Client output to result rows (`process`), a run's rows into one table (`collect`), and the
file edge that reads client outputs and results files and writes them (`files`)."""
