"""Operations: the workers' signs of life, periodic runs claimed once, the health report."""
