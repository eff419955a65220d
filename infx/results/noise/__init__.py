"""The fitted noise model of main's history, in NumPy: change points (`segments`, `cuts`),
levels and scatter (`fit`), run-level effects (`effects`), the arrays they work on
(`series`), the distributions (`tdist`), and one series' view (`single`). Pure."""
