package activities_test

import "go.temporal.io/sdk/activity"

func activityName(n string) activity.RegisterOptions { return activity.RegisterOptions{Name: n} }
