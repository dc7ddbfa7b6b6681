raise RuntimeError('KB_API_KEY is not set')
