"""The comparison written out: the PR comment, the job summary and the JSON report, inside
GitHub's size limits, every user string escaped."""
