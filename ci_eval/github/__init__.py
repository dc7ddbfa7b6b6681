"""Everything that talks to GitHub: the action's steps, the Actions environment, the REST API, artifact zips."""
