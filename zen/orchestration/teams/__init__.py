"""Agent teams: worker jobs a job starts, whom a team server acts for, and the team tools."""
