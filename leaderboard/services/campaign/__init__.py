"""The campaign: phases, their windows and quotas, freeze and verify."""
