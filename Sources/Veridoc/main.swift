print("veridoc")
