"""Each user's contact methods and notification rules: what the paging engine reaches a
person through, and after how long (PagerDuty's names; seed 002's partition per user)."""
